"""Pulumi entry point: the whole program lives in components/stack.py."""

from components.stack import main

main()
