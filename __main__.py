"""Pulumi entry point: the whole program lives in deploy/program.py."""

from deploy.program import main

main()
