import tokenmill


def test_version_matches_metadata():
    from importlib.metadata import version

    assert tokenmill.__version__ == version("tokenmill")


def test_error_hierarchy():
    assert issubclass(tokenmill.FormatError, tokenmill.TokenmillError)
    assert issubclass(tokenmill.TokenmillError, Exception)
