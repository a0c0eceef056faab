import pytest
import tokenmill
from tokenmill import decoders, processors


def test_version_matches_metadata():
    from importlib.metadata import version

    assert tokenmill.__version__ == version("tokenmill")


def test_error_hierarchy():
    assert issubclass(tokenmill.FormatError, tokenmill.TokenmillError)
    assert issubclass(tokenmill.TokenmillError, Exception)


# A component's __setstate__ given a broken tokenizer.json form, by case: (component, state).
BAD_STATES = {
    "decoder missing suffix": (decoders.Fuse, b'{"type":"BPEDecoder"}'),
    "decoder bad regex": (
        decoders.Fuse,
        b'{"type":"Replace","pattern":{"Regex":"("},"content":""}',
    ),
    "decoder cut short": (decoders.Fuse, b"{"),
    "decoder unknown type": (decoders.Fuse, b'{"type":"Nope"}'),
    "processor missing cls": (
        processors.ByteLevel,
        b'{"type":"RobertaProcessing","sep":["</s>",2]}',
    ),
    "processor no type": (processors.ByteLevel, b'{"add_prefix_space":true}'),
    "processor cut short": (processors.ByteLevel, b"["),
    "processor bad item": (processors.ByteLevel, b'{"type":"Sequence","processors":[{}]}'),
}


@pytest.mark.parametrize(("component", "state"), list(BAD_STATES.values()), ids=list(BAD_STATES))
def test_bad_component_json_raises_tokenmill_error(component, state):
    with pytest.raises(tokenmill.TokenmillError):
        component().__setstate__(state)
