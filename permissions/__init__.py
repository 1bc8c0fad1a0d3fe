"""Pure permission policy: modes, rules, the decision engine and bash analysis."""

__all__: list[str] = []
