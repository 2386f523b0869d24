"""Presentation: the one number formatter, tables as data, and their terminal (rich) and
Markdown adapters. The only room that prints."""
