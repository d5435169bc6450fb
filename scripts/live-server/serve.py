"""llama.cpp's own HTTP server (the xllamacpp wheel embeds it) on 127.0.0.1, for scripts/live-server.sh.

Usage: serve.py MODEL TEMPLATE PORT. Serves until the process ends. Its answers carry what
`toolbudget live` reads beside usage: `usage.prompt_tokens_details.cached_tokens` and `timings`
(llama.cpp tools/server/README.md, POST /v1/chat/completions, "Timings and context usage").
"""
import sys
import threading

import xllamacpp

model, template, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = xllamacpp.CommonParams()
p.model.path = model
p.hostnames = ["127.0.0.1"]
p.port = port
p.n_ctx = 4096
# One slot: a conversation's requests always meet the cache its previous request left.
p.n_parallel = 1
p.cpuparams.n_threads = 2
p.cpuparams_batch.n_threads = 2
# SmolLM2's own template renders no tools; this one does (see its header).
with open(template, encoding="utf-8") as f:
    p.chat_template = f.read()
# No RAM prompt cache: a run's first request cannot restore an earlier run's prompt from it
# (the slot's own cache still holds the previous request; toolbudget reports first requests apart).
p.cache_ram_mib = 0
server = xllamacpp.Server(p)
threading.Event().wait()
