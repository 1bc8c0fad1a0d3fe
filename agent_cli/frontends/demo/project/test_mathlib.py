"""Tests for mathlib (plain unittest: run ``python3 -m unittest -v test_mathlib``)."""

from __future__ import annotations

import unittest

from mathlib import mean, total


class MathlibTest(unittest.TestCase):
    def test_total(self) -> None:
        self.assertEqual(total([1, 2, 3]), 6)

    def test_mean(self) -> None:
        self.assertEqual(mean([2, 4, 6]), 4)

    def test_mean_of_one(self) -> None:
        self.assertEqual(mean([5]), 5)

    def test_mean_of_nothing(self) -> None:
        with self.assertRaises(ValueError):
            mean([])


if __name__ == "__main__":
    unittest.main()
