"""Custom fields of tickets (issue 22): an organization's definitions (CustomField), the values tickets carry
(`Ticket.custom_fields`, mirrored into TicketFieldValue rows for the list's filters), the rules of each type
(values), the reads (selectors) and the writes (services). docs/decisions.md, "Custom fields (issue 22)"."""
