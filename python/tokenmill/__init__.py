"""tokenmill: train and run text tokenizers."""
from tokenmill._native import __version__

__all__ = ["__version__"]
