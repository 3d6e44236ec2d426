"""Panel management API (JWT, `api_publica:gerenciar`): the organization's custom fields of tickets."""

from api_framework.responses import EnvelopeResponse
from helpdesk.api.panel import ManagementViewSet
from tickets.api.field_serializers import CustomFieldCreateIn, CustomFieldOut, CustomFieldUpdateIn
from tickets.api.field_views_docs import custom_field_docs
from tickets.fields.selectors import custom_field_get, custom_field_list
from tickets.fields.services import custom_field_create, custom_field_delete, custom_field_update


@custom_field_docs
class CustomFieldViewSet(ManagementViewSet):
    def list(self, request):
        fields = custom_field_list(organization=self.organization)
        return EnvelopeResponse(CustomFieldOut(fields, many=True).data, message="Campos listados.")

    def create(self, request):
        payload = CustomFieldCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        field = custom_field_create(organization=self.organization, **payload.validated_data)
        return EnvelopeResponse(CustomFieldOut(field).data, message="Campo criado.", status=201)

    def partial_update(self, request, **kwargs):
        field = custom_field_get(organization=self.organization, field_id=kwargs["id"])
        payload = CustomFieldUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        field = custom_field_update(field=field, **payload.validated_data)
        return EnvelopeResponse(CustomFieldOut(field).data, message="Campo atualizado.")

    def destroy(self, request, **kwargs):
        custom_field_delete(field=custom_field_get(organization=self.organization, field_id=kwargs["id"]))
        return EnvelopeResponse(None, message="Campo excluído.")
