"""Tiny calculator: the fixture project of the Rein VS Code end-to-end test."""


def divide(a: float, b: float) -> float:
    return a / b


def mean(values: list[float]) -> float:
    return divide(sum(values), len(values))


def report(values: list[float]) -> str:
    return f"mean={mean(values):.2f} n={count}"
