"""What happened to tickets, announced by the service that did it, right after its write.

Each service of tickets that changes something sends one of these signals, inside its transaction,
saying what happened, what it was before and who did it (`actor`, helpdesk.actors). Listeners in
other apps act on it (integrations writes the event and its webhook deliveries: the outbox); tickets
imports none of them. No receiver ever infers a change from a diff of a saved model: reading a
service tells you every side effect it has (docs/decisions.md, "Side effects are announced").

Every signal is sent with `sender` the model class and these keyword arguments:

- ticket_created: ticket, actor
- ticket_status_changed: ticket, previous_status (TicketStatus), actor
- ticket_priority_changed: ticket, previous_priority (str), actor
- ticket_assigned: ticket, previous_assignee (Agent or None), actor
- ticket_tags_changed: ticket, added (tags, sorted), removed (tags, sorted), actor (only when the tags changed)
- ticket_deleted: tombstone (TicketTombstone: id, number, external_id, deleted_at), actor
- reply_published: reply (a public reply, an agent's or the customer's), actor
- note_added: reply (an internal note), actor
- reply_edited: reply, previous_body, actor (only when the text changed)
- attachment_added: attachment, actor
- ticket_fields_changed: ticket, changes ({chave: tickets.fields.rules.FieldChange(previous, current,
  shown_to_partner)}, every field the write changed, hidden ones too), actor
- ticket_sla_alert: ticket, alert ("em_risco": 80% of a target's business time is gone; "violado": its deadline
  passed), target (sla.clock.Target, as announced), actor (the system: the beat); once per target and cycle
- ticket_merged: ticket (the source, as it now is: closed, merged_into set), target (the ticket it was merged
  into), actor (tickets.merging; once per source)
- contact_updated: contact, changed (field names; None when a partner's request filled blank ones), actor
- contact_anonymized: contact (as it now is), previous (ContactIdentity: what it was), tickets (TicketRef of
  each ticket it asked), actor; listeners remove their copies of `previous` in the same transaction
"""

from django.dispatch import Signal

ticket_created = Signal()
ticket_status_changed = Signal()
ticket_priority_changed = Signal()
ticket_assigned = Signal()
ticket_tags_changed = Signal()
ticket_deleted = Signal()
reply_published = Signal()
note_added = Signal()
reply_edited = Signal()
attachment_added = Signal()
ticket_fields_changed = Signal()
ticket_sla_alert = Signal()
ticket_merged = Signal()
contact_updated = Signal()
contact_anonymized = Signal()
