#!/usr/bin/perl
# hooks/indigo.pl
