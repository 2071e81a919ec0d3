#!/bin/bash
echo deploying
