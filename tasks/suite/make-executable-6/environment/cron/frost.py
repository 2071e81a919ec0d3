#!/usr/bin/env python3
# cron/frost.py
