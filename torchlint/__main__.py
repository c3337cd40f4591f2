"""`python -m torchlint`: the same command, without the working directory first on sys.path.

`-m` puts the working directory in front of the standard library, so a project's own
`click.py` or `json.py` would be imported in place of the real ones.
"""

import os
import sys

sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]

from torchlint.cli import main  # noqa: E402

main()
