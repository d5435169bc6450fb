"""A server that reads requests but never answers. It also starts a grandchild (as npx or uvx
would) and writes the grandchild's pid to the file named by FAKE_GRANDCHILD_PID_FILE, so the
test can check that the whole process group was killed."""
import os
import subprocess
import sys

pid_file = os.environ.get("FAKE_GRANDCHILD_PID_FILE")
if pid_file:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    with open(pid_file + ".tmp", "w") as f:
        f.write(str(child.pid))
    os.replace(pid_file + ".tmp", pid_file)
sys.stderr.write("listening on stdio (but never answering)\n")
sys.stderr.flush()
for _ in sys.stdin:
    pass
# stdin closed: keep hanging anyway, as a stuck server would.
import time
time.sleep(300)
