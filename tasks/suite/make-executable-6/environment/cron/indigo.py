#!/usr/bin/env python3
# cron/indigo.py
