#!/usr/bin/env bash
# ./run.sh typed inside src/, as in the course's layout (where run.sh sits beside run.py): the targets live in
# the run.sh one folder up, which works from any directory.
exec "$(dirname "${BASH_SOURCE[0]}")/../run.sh" "$@"
