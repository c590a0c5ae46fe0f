"""Fixture project for the language server tests."""


def greet(name: str) -> str:
    return f"hello {name}"


def shout(name: str) -> str:
    return greet(name).upper()
