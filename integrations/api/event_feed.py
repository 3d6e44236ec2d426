"""Partner API v1: GET /api/v1/eventos, the organization's events in order, each the body a webhook
delivery carries, whether or not a webhook subscribes (with the `incluir` blocks asked for, as a webhook with
that setting is sent them)."""

import json

from api_framework.responses import EnvelopeResponse
from foundation.ids import parse_uuid
from integrations.api.base import PartnerViewSet
from integrations.api.event_feed_docs import event_feed_docs
from integrations.api.event_feed_serializers import EventFeedQuery
from integrations.bodies import with_blocks
from integrations.scopes import Scope
from integrations.selectors import event_feed


@event_feed_docs
class EventFeedViewSet(PartnerViewSet):
    scopes = {"list": Scope.EVENTS_READ}

    def list(self, request):
        query = EventFeedQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        after = query.validated_data.get("depois_de")
        page = event_feed(
            organization=self.organization,
            after_event_id=after,
            kinds=query.validated_data.get("tipo"),
            limit=query.validated_data["limite"],
        )
        blocks = query.validated_data.get("incluir", ())
        payload = {
            "itens": [with_blocks(json.loads(body), stored, blocks) for _id, body, stored, *_position in page.rows],
            "proximo": str(page.rows[-1][0]) if page.rows else (str(parse_uuid(after)) if after else None),
            "tem_mais": page.has_more,
        }
        return EnvelopeResponse(payload, message="Eventos listados.")
