"""torchlint: find what makes PyTorch training slow, fix it, and prove the fix."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("torchlint")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
