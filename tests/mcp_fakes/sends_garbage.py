"""A server that writes log text on stdout, where only JSON-RPC belongs, and never answers."""
import sys
import time

sys.stdout.write("Server v1.2 listening on stdio\n")
sys.stdout.flush()
for line in sys.stdin:
    sys.stdout.write("got a request, but this is not JSON-RPC\n")
    sys.stdout.flush()
time.sleep(300)
