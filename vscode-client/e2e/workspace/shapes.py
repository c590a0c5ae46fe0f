"""Areas of shapes; the review test's run edits this file in two places."""


def square(side: float) -> float:
    return side * side


def circle(radius: float) -> float:
    return 3.14 * radius * radius
