#!/usr/bin/env python
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # A command's stdout is its answer (`--json`); its log lines go to stderr.
    os.environ.setdefault("LOG_STREAM", "stderr")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
