#!/usr/bin/env bash
# A stand-in for python (tests/kit/test_compile.py sets PYTHON to it): prints ARGS and its arguments, NUL-separated.
printf 'ARGS'
printf '\0%s' "$@"
printf '\n'
