"""Prompt templates, installed as the `hephaistus.prompts` package data."""
