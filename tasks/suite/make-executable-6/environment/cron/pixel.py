#!/usr/bin/env python3
# cron/pixel.py
