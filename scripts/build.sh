#!/bin/sh
# Builds Folio from a checkout, step by step. The Dockerfile runs these steps
# in its stages, test/deploy.test.ts runs the same steps in a temporary copy
# of the repository, and a plain install (docs/deploy.md) runs them in one
# directory: scripts/build.sh deps compile prod-deps
#
#   deps           every dependency, exactly as package-lock.json pins them;
#                  no install scripts: compiling needs no native binding
#   compile        TypeScript (src/) into JavaScript (dist/)
#   prod-deps      the production dependencies only, as the lockfile pins
#                  them (any others are removed), with better-sqlite3's
#                  native binding: a prebuilt one if it can be downloaded,
#                  otherwise built with python3, make and a C++ compiler
#   link BIN_DIR   puts the `folio` command (dist/cli/index.js) in BIN_DIR
#
# Each step works in the directory holding scripts/, and stops at the first
# error with a non-zero exit status.
set -eu

cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/build.sh STEP... (deps, compile, prod-deps, link BIN_DIR)" >&2
  exit 2
}

[ $# -gt 0 ] || usage
while [ $# -gt 0 ]; do
  step=$1
  shift
  case $step in
    deps)
      npm ci --ignore-scripts --no-audit --no-fund
      ;;
    compile)
      npm run build
      [ -f dist/cli/index.js ] || { echo "scripts/build.sh: compile made no dist/cli/index.js" >&2; exit 1; }
      # The `folio` command runs this file itself (its first line names node):
      # executable here, so that a tree compiled for an upgrade runs as linked.
      chmod 755 dist/cli/index.js
      ;;
    prod-deps)
      # --ignore-scripts: Folio's own `prepare` compiles, which needs the
      # development dependencies; better-sqlite3's install script runs alone.
      npm ci --omit=dev --ignore-scripts --no-audit --no-fund
      # JOBS: node-gyp compiles on every core when it must compile.
      JOBS=max npm rebuild better-sqlite3
      # A binding that does not load fails the build here, not the first start.
      node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
      ;;
    link)
      [ $# -gt 0 ] || usage
      bin_dir=$1
      shift
      [ -f dist/cli/index.js ] || { echo "scripts/build.sh: no dist/cli/index.js to link; run the compile step first" >&2; exit 1; }
      chmod 755 dist/cli/index.js
      mkdir -p "$bin_dir"
      ln -sf "$(pwd)/dist/cli/index.js" "$bin_dir/folio"
      "$bin_dir/folio" --version >/dev/null
      ;;
    *)
      echo "scripts/build.sh: unknown step \"$step\"" >&2
      usage
      ;;
  esac
done
