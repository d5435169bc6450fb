# Sourced by the dev-set scripts: the labeled query sets and the catalogs each is evaluated
# against ("own catalog"); the pool is every catalog of the shared data.
#   devset NAME  sets DEVSET=(-c ... --queries FILE), or returns 1 when its data is missing.
# DATA (default ../shared/data) must be set by the caller; paths are relative to the repository.
DEVSETS=(bfcl stabletoolbench mcp-devops mcp-desktop mcp-mixed)

devset() {
    local c="$DATA/catalogs" f
    DEVSET=()
    [[ -d "$c" ]] || return 1
    case "$1" in
        bfcl | stabletoolbench)
            DEVSET=(-c "$c/$1.json" --queries "$DATA/queries/$1.jsonl") ;;
        mcp-devops | mcp-desktop | mcp-mixed)
            if [[ "$1" != mcp-desktop ]]; then
                DEVSET+=(-c "$c/github.json" -c "$c/kubernetes.json")
                for f in "$c"/docker/*.json; do DEVSET+=(-c "$f"); done
            fi
            if [[ "$1" != mcp-devops ]]; then
                for f in "$c"/livemcpbench/*.json "$c"/{cloudflare-browser,cloudflare-docs,cloudflare-radar,mcp-server-fetch,server-filesystem,server-github,server-memory,server-puppeteer}.json; do
                    DEVSET+=(-c "$f")
                done
            fi
            DEVSET+=(--queries "fixtures/queries/mcp/$1.jsonl") ;;
        *) return 1 ;;
    esac
}
