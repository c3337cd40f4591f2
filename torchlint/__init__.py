"""torchlint: find what makes PyTorch training slow, fix it, and prove the fix."""

# The one place the version is written (pyproject.toml reads it): reading it back from the
# installed metadata costs importlib.metadata, a tenth of the start-up budget.
__version__ = "0.1.0"
# Its home (also `[project.urls]`): findings link to docs/rules/ there, install hints name it.
REPOSITORY = "https://github.com/torchlint/torchlint"
