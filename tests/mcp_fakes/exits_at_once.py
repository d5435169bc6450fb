"""A server that dies before answering anything, like one missing its configuration."""
import sys

sys.stderr.write("starting fake server\n")
sys.stderr.write("fatal: GITHUB_TOKEN is not set\n")
sys.exit(3)
