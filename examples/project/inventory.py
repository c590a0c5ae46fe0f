"""A tiny inventory: the project `rein demo` works on."""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int


def load_items() -> list[Item]:
    return [
        Item("widget", 2.5, 10),
        Item("gadget", 12.0, 3),
        Item("doohickey", 0.75, 40),
    ]


def describe(item: Item) -> str:
    return f"{item.quantity} x {item.name} at {item.price:.2f}"


if __name__ == "__main__":
    for item in load_items():
        print(describe(item))
