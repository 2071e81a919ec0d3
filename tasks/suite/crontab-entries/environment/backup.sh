#!/bin/bash
echo backup
