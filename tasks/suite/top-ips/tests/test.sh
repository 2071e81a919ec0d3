#!/bin/bash
# Runs the hidden checks with the host's pytest (no downloads) and turns its exit code into the reward.
mkdir -p /logs/verifier
export PYTHONDONTWRITEBYTECODE=1
python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
