"""The texts, names and values ``earful seed`` draws its demo threads from."""

TAG_NAMES = (
    "bug",
    "feature request",
    "billing",
    "login",
    "performance",
    "ui",
    "mobile",
    "export",
    "integrations",
    "onboarding",
    "praise",
    "pricing",
    "notifications",
    "search",
    "accessibility",
    "data loss",
)
MESSAGES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "positive": (
            "Love the new dashboard, it is so much faster than before. Great work!",
            "Thanks for the quick fix on the export, everything works perfectly now.",
            "The mobile app is excellent, my whole team uses it every day.",
            "Really happy with the search, it finds exactly what I need.",
        ),
        "neutral": (
            "Is there a way to change the date format in the reports?",
            "How do I invite a colleague to my workspace?",
            "Could you add a keyboard shortcut for archiving?",
            "Where can I find the invoices for last year?",
        ),
        "negative": (
            "The export button does nothing and I lost an hour of work. Very frustrating.",
            "Login fails every morning, I have to reset my password again and again.",
            "The app is terribly slow since the last update, pages take ages to load.",
            "I was charged twice this month, this is unacceptable.",
        ),
    },
    "es": {
        "positive": (
            "Me encanta el nuevo panel, es mucho más rápido. ¡Buen trabajo!",
            "Gracias por arreglar la exportación tan rápido, ahora todo funciona.",
        ),
        "neutral": (
            "¿Cómo puedo cambiar el idioma de los informes?",
            "¿Hay alguna forma de invitar a un compañero a mi espacio?",
        ),
        "negative": (
            "El botón de exportar no funciona y perdí mi trabajo. Muy frustrante.",
            "La aplicación es muy lenta desde la última actualización.",
        ),
    },
    "pt": {
        "positive": (
            "Adorei o novo painel, ficou muito mais rápido. Parabéns!",
            "Obrigado pela correção rápida, agora tudo funciona perfeitamente.",
        ),
        "neutral": (
            "Como posso alterar o formato da data nos relatórios?",
            "Existe uma forma de convidar um colega para o meu espaço?",
        ),
        "negative": (
            "O botão de exportar não funciona e perdi o meu trabalho. Muito frustrante.",
            "O aplicativo está muito lento desde a última atualização.",
        ),
    },
}
AGENT_REPLIES = (
    "Thanks for writing in! We are looking into it and will get back to you shortly.",
    "Good news: a fix for this ships today. Let us know if it happens again.",
    "You can change this under Settings, then Preferences. Does that help?",
    "Sorry about that. I have refunded the duplicate charge.",
)
CUSTOMER_REPLIES = (
    "Thanks, that worked!",
    "It still happens on my phone, any update?",
    "Great, thank you for the quick answer.",
)
NOTES = (
    "Reproduced on staging, ticket filed.",
    "VIP customer, answer within the day.",
    "Duplicate of an earlier report, linked.",
)
FIRST_NAMES = (
    "Ana",
    "Ben",
    "Chloé",
    "Diego",
    "Emma",
    "Felipe",
    "Grace",
    "Hugo",
    "Inês",
    "João",
    "Kai",
    "Lena",
)
LAST_NAMES = ("Silva", "Smith", "García", "Müller", "Costa", "Brown", "Lopez", "Martin", "Santos", "Kim")
USER_AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Acme/4.2.0 (Android 15; Pixel 8)",
)
URLS = (
    "https://app.example.com/dashboard",
    "https://app.example.com/reports/export",
    "https://app.example.com/settings/billing",
    "https://app.example.com/login",
    None,
)
