"""Bodies of the panel's login, refresh and logout (helpdesk.api.auth_views)."""

from rest_framework import serializers

from api_framework.fields import TextField
from helpdesk.auth import panel_permissions


class LoginIn(serializers.Serializer):
    email = TextField(max_length=254)
    senha = TextField(source="password", max_length=4096, trim_whitespace=False)


class RefreshIn(serializers.Serializer):
    refresh_token = TextField(source="raw_refresh_token", max_length=4096)


class PanelUserOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    email = serializers.EmailField()
    permissoes = serializers.SerializerMethodField()

    def get_permissoes(self, user) -> list[str]:
        return panel_permissions(user)


class TokensOut(serializers.Serializer):
    access_token = serializers.CharField()
    refresh_token = serializers.CharField()
    token_type = serializers.CharField()
    expires_in = serializers.IntegerField()
    usuario = PanelUserOut()
