#!/usr/bin/env python3
# scripts/solar.py
