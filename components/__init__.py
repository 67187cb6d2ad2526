"""Determined on Kubernetes with Pulumi: configuration, platforms, add-ons and the app."""
