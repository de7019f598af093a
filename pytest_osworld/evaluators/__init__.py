"""Evaluation: postconfig, getters, metrics and the rules that combine them."""
