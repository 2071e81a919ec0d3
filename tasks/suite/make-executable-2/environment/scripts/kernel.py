#!/usr/bin/env python3
# scripts/kernel.py
