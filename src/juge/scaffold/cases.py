"""The starter cases `juge init` writes: 30 support questions to a photo-printing shop, each with
a right answer and a flawed one (an invented fact, a wrong figure, a dodge). Written for juge."""

from __future__ import annotations

FACTS = (
    "Pixel & Paper prints photos ordered online. Prints: 10x15 cm $0.30 each, 20x30 cm $2.50 each; "
    "photo books from $24. Orders are printed within 2 business days. Standard shipping $4.90, free "
    "over $40, 5-7 business days; express $12.90, 2 business days; no shipping outside the EU and UK. "
    "An order can be changed or cancelled within 1 hour of placing it. A misprinted or damaged item is "
    "reprinted free when reported within 30 days with a photo; correctly printed custom items are not "
    "refunded. Support: help@pixelpaper.example, Monday-Friday 9:00-17:00."
)

# (category, question, right answer, flawed answer)
ITEMS: tuple[tuple[str, str, str, str], ...] = (
    (
        "orders",
        "How much does a 10x15 print cost?",
        "A 10x15 cm print costs $0.30.",
        "A 10x15 cm print costs $0.50, or $0.30 if you order more than 100.",
    ),
    (
        "orders",
        "What do the big 20x30 prints cost?",
        "A 20x30 cm print is $2.50 each.",
        "Big prints are $1.99 each this week.",
    ),
    (
        "orders",
        "I ordered 20 minutes ago and picked the wrong photo. Can I change it?",
        "Yes: an order can be changed within 1 hour of placing it, so you still have time. Open the "
        "order in your account and replace the photo.",
        "Sorry, once an order is placed it goes straight to our print queue and cannot be changed any more. "
        "You could place a new order with the right photo and keep the first one as a spare.",
    ),
    (
        "orders",
        "Can I cancel an order I placed yesterday?",
        "Orders can only be cancelled within 1 hour of placing them, so yesterday's order can no longer be cancelled.",
        "Of course, every order can be cancelled until it ships. Just reply to your confirmation email.",
    ),
    (
        "orders",
        "How much is a photo book?",
        "Photo books start at $24; the price grows with the size and number of pages.",
        "Photo books are a flat $15 whatever the size or number of pages, and the cover is included in that price.",
    ),
    (
        "orders",
        "How long does it take before my order is printed?",
        "Orders are printed within 2 business days, then shipped.",
        "We print every order the same day it comes in.",
    ),
    (
        "orders",
        "Do you print on canvas?",
        "Our shop facts list prints and photo books only, so I can't confirm canvas. Please ask "
        "help@pixelpaper.example.",
        "Yes, we print on canvas too: canvas prints start at $39 for the smallest size, are stretched on a "
        "wooden frame and take 5 days to make before they ship.",
    ),
    (
        "orders",
        "Is there a discount for ordering 200 prints?",
        "I don't have any bulk discount in our price list: 10x15 prints are $0.30 each. Support at "
        "help@pixelpaper.example can tell you if there is an offer.",
        "Yes, 200 prints or more get 25% off automatically at checkout.",
    ),
    (
        "orders",
        "Can I add a print to an order I placed 3 hours ago?",
        "Changes are possible within 1 hour of placing an order, so this one can't be changed now; "
        "place a second order for the extra print.",
        "Sure, I've added the extra print to your order from 3 hours ago; it will be printed and shipped "
        "together with the rest, and you will get an updated confirmation email.",
    ),
    (
        "orders",
        "When can I call your support team?",
        "Support answers by email at help@pixelpaper.example, Monday to Friday, 9:00 to 17:00.",
        "Our phone line is open 24/7 on +1 555 0100.",
    ),
    (
        "shipping",
        "How much is shipping?",
        "Standard shipping is $4.90 and free on orders over $40; express is $12.90.",
        "Shipping is always free with us, whatever the size of your order and wherever you live, and every "
        "parcel comes with tracking.",
    ),
    (
        "shipping",
        "My order is $45. Do I pay for shipping?",
        "No: standard shipping is free on orders over $40.",
        "Yes, standard shipping is $4.90 on every order.",
    ),
    (
        "shipping",
        "How fast is express delivery?",
        "Express takes 2 business days after printing and costs $12.90.",
        "Express is our fastest option: it arrives the next morning before noon, as long as you order before 17:00.",
    ),
    (
        "shipping",
        "How long does standard shipping take?",
        "Standard shipping takes 5-7 business days after your order is printed.",
        "Standard shipping takes 1-2 weeks.",
    ),
    (
        "shipping",
        "Do you ship to Canada?",
        "No, sorry: we only ship within the EU and the UK.",
        "Yes, we ship worldwide, Canada included; delivery there usually takes 7-10 business days and costs "
        "the same as standard shipping.",
    ),
    (
        "shipping",
        "Can I send my order to the UK?",
        "Yes, we ship to the UK.",
        "No, since Brexit we only ship within the EU.",
    ),
    (
        "shipping",
        "I need my prints in 4 days. What should I choose?",
        "Choose express: printing takes up to 2 business days and express delivery 2 more, so about 4 "
        "business days in all.",
        "Standard shipping will get there in time.",
    ),
    (
        "shipping",
        "Is express free over $40 too?",
        "No, only standard shipping is free over $40; express is $12.90.",
        "Yes, every shipping option is free once your order is over $40, express included, so choose express "
        "at checkout.",
    ),
    (
        "shipping",
        "Can I pick up my order at your shop?",
        "Our facts list no pick-up point, only shipping; help@pixelpaper.example can confirm.",
        "Yes, pick-up is free at our Berlin store every day.",
    ),
    (
        "shipping",
        "Do you deliver on Saturdays?",
        "I don't know the carrier's weekend schedule; shipping times are given in business days. "
        "help@pixelpaper.example can check.",
        "Yes, all our parcels are also delivered on Saturdays, and you can pick a Saturday delivery slot in "
        "your account after the order has shipped.",
    ),
    (
        "returns",
        "My prints arrived with a scratch. What can I do?",
        "Send a photo of the damage to help@pixelpaper.example within 30 days and we reprint them free.",
        "Damaged prints can't be replaced; shipping is at your own risk.",
    ),
    (
        "returns",
        "The colours on my photo book are wrong. Can I get a refund?",
        "A misprinted item is reprinted free when you report it within 30 days with a photo; write to "
        "help@pixelpaper.example.",
        "Yes, we refund every photo book within 14 days, no questions asked: send it back in its original "
        "packaging and the money is on your card within a week.",
    ),
    (
        "returns",
        "I don't like how my photo looks printed, but it printed correctly. Can I return it?",
        "Correctly printed custom items are not refunded, sorry; only misprinted or damaged ones are reprinted.",
        "Sure, any print can be returned for a full refund within 30 days.",
    ),
    (
        "returns",
        "My parcel arrived crushed 2 months ago. Can you reprint it?",
        "Damage has to be reported within 30 days, so a parcel from 2 months ago is too late for a free "
        "reprint, sorry.",
        "Yes, shipping damage is covered for a whole year after delivery, so 2 months is fine: send us a "
        "photo of the crushed parcel and we will reprint the order and ship it again for free.",
    ),
    (
        "returns",
        "Do I need to send the damaged prints back?",
        "A photo of the damage is enough: send it to help@pixelpaper.example within 30 days.",
        "Yes, mail the prints back to us at your own cost first.",
    ),
    (
        "returns",
        "A print is missing from my order. What now?",
        "Write to help@pixelpaper.example with your order number; support will look into it.",
        "Missing prints are refunded automatically: our system notices the missing print and the money is "
        "sent back to your card, you don't need to do anything.",
    ),
    (
        "returns",
        "Is a reprint free?",
        "Yes, a misprinted or damaged item is reprinted free when reported within 30 days with a photo.",
        "Reprints cost half the original price.",
    ),
    (
        "returns",
        "How long do I have to report a misprint?",
        "30 days from delivery, with a photo of the misprint.",
        "You have 7 days from delivery to report a misprint; after that we cannot reprint it, so check your "
        "prints as soon as they arrive.",
    ),
    (
        "returns",
        "Can I exchange a photo book for prints?",
        "Correctly printed custom items can't be returned or exchanged; a misprinted book is reprinted "
        "free within 30 days.",
        "Yes, exchanges are free within 30 days.",
    ),
    (
        "returns",
        "My photo book's pages came loose. Refund or reprint?",
        "That is a damaged item: send a photo to help@pixelpaper.example within 30 days and we reprint it free.",
        "Loose pages are normal wear and are not covered.",
    ),
)
