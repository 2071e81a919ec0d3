#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/tmp_fixtures
tar -xf /app/fixtures.tar.gz -C /app/tmp_fixtures fixtures/anchor.txt
