"""Attachments of tickets and replies: storage, the content checks, the streamed upload, signed links."""
