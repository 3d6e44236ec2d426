def test_health_reports_database_and_broker_ok(anon_client, db):
    response = anon_client.get("/api/health")

    assert response.status_code == 200
    assert response.json() == {
        "success": True,
        "message": "Serviço operacional.",
        "data": {"database": "ok", "broker": "ok"},
        "errors": [],
    }
