"""GET /users/me."""

from tests.factories import body_json, make_token, make_user


async def test_users_me_returns_the_authenticated_user(api):
    user = await make_user(email="ann@example.com", name="Ann Lee")
    token = await make_token(user, "read")

    response = await api.get("/users/me", token)

    assert response.status_code == 200
    assert await body_json(response) == {
        "data": {"id": user.id, "email": "ann@example.com", "name": "Ann Lee"}
    }
