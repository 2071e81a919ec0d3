#!/usr/bin/env python3
# scripts/ember.py
