"""The panel permission, by the name API clients see and by Django's name."""

MANAGE_PUBLIC_API = "api_publica:gerenciar"
MANAGE_PUBLIC_API_CODENAME = "gerenciar_api_publica"
MANAGE_PUBLIC_API_PERM = f"helpdesk.{MANAGE_PUBLIC_API_CODENAME}"
