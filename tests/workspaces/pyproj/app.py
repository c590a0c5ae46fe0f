"""Fixture project for the end-to-end gate tests."""


def greet(name: str) -> str:
    return f"hello {name}"
