"""Starts a child process, then never finishes.

argv[1] names a file where the child's pid is written, so a test can check that verify
killed the child along with the script.
"""

import subprocess
import sys
import time
from pathlib import Path

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
Path(sys.argv[1]).write_text(str(child.pid))
while True:
    time.sleep(0.1)
