"""Pulumi entry point: the whole program lives in components/program.py."""

from components.program import main

main()
