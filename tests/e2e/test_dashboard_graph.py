"""The dashboard's Graph and Projects views in a real browser, against a real server seeded over HTTP."""

import re

from playwright.sync_api import expect


def capture(client, content: str, **extra) -> str:
    answer = client.post("/capture", json={"content": content, **extra})
    assert answer.status_code == 200, answer.text
    return answer.json()["id"]


def seed_graph(server) -> dict[str, str]:
    with server.client() as client:
        ids = {
            "pricing": capture(client, "The pricing floor is six thousand euros per project", tags=["pricing"],
                               project="atlas"),
            "invoice": capture(client, "Invoices go out on the first working day of the month", tags=["billing"]),
            "roof": capture(client, "The roof of the garage leaks when the wind comes from the west"),
        }
        linked = client.post("/link", json={"source_id": ids["pricing"], "target_id": ids["invoice"],
                                            "type": "caused_by"})
        assert linked.status_code == 200, linked.text
    return ids


def check_accessibility(dashboard, page) -> None:
    page.emulate_media(color_scheme="light")
    assert dashboard.accessibility() == []
    page.emulate_media(color_scheme="dark")
    assert dashboard.accessibility() == []
    page.emulate_media(color_scheme="light")


def test_graph_draws_nodes_and_links_and_opens_a_memory_by_keyboard(dashboard):
    ids = seed_graph(dashboard.server)
    page = dashboard.open("graph")
    svg = page.locator("svg.graph")
    expect(svg.locator("a.node")).to_have_count(2)  # the roof note has no link: left out, and said so
    expect(page.get_by_text("1 memory with no link is left out")).to_be_visible()
    node = svg.locator(f'a.node[data-id="{ids["pricing"]}"]')
    expect(node).to_have_attribute("aria-label", re.compile("^The pricing floor"))
    # The edge, with its relationship type on hover (its <title>, and the line under the picture).
    edge = svg.locator(f'g.edge[data-source="{ids["pricing"]}"][data-target="{ids["invoice"]}"]')
    expect(edge).to_have_count(1)
    expect(edge.locator("title")).to_contain_text("caused by")
    # Every node is drawn inside the picture, with a position the layout gave it.
    box = svg.bounding_box()
    for circle in svg.locator("circle").all():
        inner = circle.bounding_box()
        assert box["x"] <= inner["x"] and inner["x"] + inner["width"] <= box["x"] + box["width"]
        assert box["y"] <= inner["y"] and inner["y"] + inner["height"] <= box["y"] + box["height"]
    # Colours by project, with a legend; by kind on request (remembered).
    legend = page.locator("ul.legend")
    expect(legend).to_contain_text("atlas (1)")
    expect(legend).to_contain_text("no project (1)")
    fills = {page.locator(f'a.node[data-id="{ids[key]}"] circle').evaluate("c => getComputedStyle(c).fill")
             for key in ("pricing", "invoice")}
    assert len(fills) == 2, fills  # atlas, and the grey of "no project"
    page.locator("#graph-colour").select_option("workspace")
    expect(page.locator("ul.legend")).to_contain_text("personal (2)")
    # The same graph as lists, for screen readers and keyboards.
    nodes = page.locator("section", has=page.get_by_role("heading", name="Nodes"))
    expect(nodes.get_by_role("link", name=re.compile("^Invoices go out"))).to_be_visible()
    links = page.locator("section", has=page.get_by_role("heading", name="Links"))
    expect(links.locator("li")).to_have_count(1)
    expect(links.locator("li")).to_contain_text("caused by")
    expect(page.get_by_text("2 memories, 1 link")).to_be_visible()
    dashboard.screenshot("graph")
    check_accessibility(dashboard, page)
    dashboard.open("graph")
    expect(page.locator("#graph-colour")).to_have_value("workspace")
    page.locator("#graph-colour").select_option("project")

    # Keyboard: Tab from the form reaches the nodes (best connected first); focus tells how it is linked.
    page.locator("#graph-limit").focus()
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('node')"):
            break
    focused = page.evaluate("document.activeElement.dataset.id")
    assert focused in (ids["pricing"], ids["invoice"])
    expect(page.locator(".graph-details")).to_contain_text("caused by")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#/entry\?id=" + focused))
    expect(page.locator("#view-title")).to_have_text("Memory")


def test_the_first_view_leaves_unlinked_memories_out_and_says_how_many(dashboard):
    """Issue 64 item 5: 98 grey unlinked dots of 100 drawn. Memories with no link are left out of the picture with
    a count, one press from being drawn; the best connected and their neighbours are what the picture shows."""
    ids = seed_graph(dashboard.server)
    with dashboard.server.client() as client:
        loose = [capture(client, text) for text in ("Buy more dog food on Saturday", "Renew the passport before June",
                                                    "The bike's back tyre is flat", "Try the new ramen place")]
    page = dashboard.open("graph")
    svg = page.locator("svg.graph")
    expect(svg.locator("a.node")).to_have_count(2)
    for key in (ids["roof"], *loose):
        expect(svg.locator(f'a.node[data-id="{key}"]')).to_have_count(0)
    page.get_by_role("link", name="show them").click()
    expect(svg.locator("a.node")).to_have_count(7)
    expect(page.get_by_text("5 have no link")).to_be_visible()
    page.get_by_role("link", name="leave them out").click()
    expect(svg.locator("a.node")).to_have_count(2)
    assert not dashboard.errors, dashboard.errors


def test_zoom_stays_where_the_drawing_is_and_labels_stay_distinct(dashboard):
    """Issue 64 item 5: four wheel ticks zoomed 11x into an empty box; two memories read "The Atlas weekly…"."""
    with dashboard.server.client() as client:
        hub = capture(client, "Atlas project: the weekly meetings")
        alike = [capture(client, f"The Atlas weekly sync: {topic}") for topic in
                 ("budget review for Q3", "hiring plan for Q3", "the launch checklist")]
        for other in alike:
            assert client.post("/link", json={"source_id": other, "target_id": hub, "type": "part_of_project"}
                               ).status_code == 200
    page = dashboard.open(f"entry?id={hub}")
    around = page.locator("section", has=page.get_by_role("heading", name="Around it"))
    expect(around.locator("a.node")).to_have_count(4)
    page.wait_for_timeout(100)  # the labels are placed on the next frame
    texts = around.locator(".labels text").evaluate_all("texts => texts.map(t => t.textContent)")
    assert len(texts) == 4 and len(set(texts)) == 4, texts  # each its own words, none a copy of another's
    page = dashboard.open("graph")
    svg = page.locator("svg.graph")
    expect(svg.locator("a.node")).to_have_count(4)
    box = svg.bounding_box()
    page.mouse.move(box["x"] + 5, box["y"] + 5)  # a corner with nothing drawn in it
    for _ in range(20):
        page.mouse.wheel(0, -240)
    page.wait_for_timeout(200)
    assert scale_of(page) <= 4
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 3, box["y"] + box["height"] * 3, steps=5)  # a long drag away
    page.mouse.up()
    inside = [c for c in (circle.bounding_box() for circle in svg.locator("a.node circle").all())
              if box["x"] <= c["x"] + c["width"] / 2 <= box["x"] + box["width"]
              and box["y"] <= c["y"] + c["height"] / 2 <= box["y"] + box["height"]]
    assert inside, "the view was left over empty space"
    assert not dashboard.errors, dashboard.errors


def test_graph_centres_on_words_and_filters_and_errors(dashboard):
    ids = seed_graph(dashboard.server)
    # The entry view links to its graph with ?seed=<id>: the graph is centred on that memory and its neighbours.
    page = dashboard.open(f"entry?id={ids['invoice']}")
    page.get_by_role("link", name="Show in graph").click()
    expect(page).to_have_url(re.compile(r"#/graph\?seed=" + ids["invoice"]))
    expect(page.locator("a.node")).to_have_count(2)
    expect(page.locator(f'a.node.seed[data-id="{ids["invoice"]}"]')).to_have_count(1)
    expect(page.locator(f'a.node[data-id="{ids["roof"]}"]')).to_have_count(0)
    # The centre is shown by its words, and drawing again unchanged keeps it.
    expect(page.locator("#graph-seed")).to_have_value("Invoices go out on the first working day of the month")
    expect(page.get_by_text("centred on")).to_be_visible()
    page.get_by_role("button", name="Draw").click()
    expect(page).to_have_url(re.compile(r"#/graph\?seed=" + ids["invoice"] + "$"))

    # Centre on words: a memory of the drawing whose label holds them is the centre at once...
    page = dashboard.open("graph")
    page.locator("#graph-seed").fill("pricing floor")
    page.get_by_role("button", name="Draw").click()
    expect(page).to_have_url(re.compile(r"#/graph\?seed=" + ids["pricing"] + "$"))
    expect(page.locator("#graph-seed")).to_have_value(re.compile("^The pricing floor"))  # drawn: the new form
    # ...others are looked up by meaning, and the matches offered (the roof is not drawn at this centre).
    page.locator("#graph-seed").fill("leaking garage roof in the wind")
    page.get_by_role("button", name="Draw").click()
    choices = page.get_by_role("status").filter(has_text="Centre on which memory?")
    expect(choices).to_be_visible()
    choices.get_by_role("link", name=re.compile("^The roof of the garage")).click()
    expect(page).to_have_url(re.compile(r"#/graph\?seed=" + ids["roof"] + "$"))
    expect(page.locator(f'a.node.seed[data-id="{ids["roof"]}"]')).to_have_count(1)
    # An id still works as it is.
    page.locator("#graph-seed").fill(ids["invoice"])
    page.get_by_role("button", name="Draw").click()
    expect(page).to_have_url(re.compile(r"#/graph\?seed=" + ids["invoice"] + "$"))
    expect(page.locator("#graph-seed")).to_have_value(re.compile("^Invoices go out"))

    # The form: a project (typed) narrows the drawing to its memories.
    page.locator("#graph-seed").fill("")
    page.locator("#graph-project").fill("atlas")
    page.get_by_role("button", name="Draw").click()
    expect(page).to_have_url(re.compile(r"#/graph\?project=atlas$"))
    expect(page.locator(f'a.node[data-id="{ids["pricing"]}"]')).to_have_count(1)
    expect(page.locator(f'a.node[data-id="{ids["roof"]}"]')).to_have_count(0)

    # An unknown project: the API's sentence, and the projects it knows as links.
    page = dashboard.open("graph?project=nope")
    expect(page.get_by_role("alert")).to_have_text('unknown project "nope"')
    expect(page.locator("svg.graph")).to_have_count(0)
    page.get_by_role("link", name="atlas").click()
    expect(page).to_have_url(re.compile(r"#/graph\?project=atlas$"))
    expect(page.locator("a.node")).not_to_have_count(0)

    # A limit the API refuses is a sentence too.
    page = dashboard.open("graph?limit=0")
    expect(page.get_by_role("alert")).to_contain_text("limit must be at least 1")


def seed_web(server, size: int = 60) -> list[str]:
    """`size` memories with long look-alike labels, linked as a few hubs with spokes: a crowded picture."""
    with server.client() as client:
        ids = [capture(client, f"Weekly planning note {i:02d} about the supplier contract renewal and its budget",
                       project=("atlas", "pricing", "roadmap")[i % 3]) for i in range(size)]
        for i, target in enumerate(ids[6:], start=6):
            answer = client.post("/link", json={"source_id": ids[i % 6], "target_id": target, "type": "relates_to"})
            assert answer.status_code == 200, answer.text
    return ids


def label_boxes(page) -> list[dict]:
    return page.locator("svg.graph .labels text").evaluate_all(
        "texts => texts.map(t => { const b = t.getBoundingClientRect(); "
        "return {x: b.x, y: b.y, w: b.width, h: b.height, id: t.dataset.id}; })")


def assert_no_collisions(boxes: list[dict]) -> None:
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = (a["x"] + a["w"] <= b["x"] + 0.5 or b["x"] + b["w"] <= a["x"] + 0.5
                     or a["y"] + a["h"] <= b["y"] + 0.5 or b["y"] + b["h"] <= a["y"] + 0.5)
            assert apart, (a, b)


def scale_of(page) -> float:
    transform = page.locator("svg.graph g.viewport").get_attribute("transform") or "scale(1)"
    return float(re.search(r"scale\(([\d.]+)\)", transform).group(1))


def test_graph_zooms_pans_and_keeps_labels_apart(dashboard):
    ids = seed_web(dashboard.server)
    page = dashboard.open("graph")
    svg = page.locator("svg.graph")
    expect(svg.locator("a.node")).to_have_count(60)
    expect(svg.locator(".labels text").first).to_be_visible()
    # Sixty look-alike labels cannot all be shown at once: those shown never overlap, and never take the pointer.
    start = label_boxes(page)
    assert 0 < len(start) < 60
    assert_no_collisions(start)
    assert svg.locator(".labels").evaluate("g => getComputedStyle(g).pointerEvents") == "none"

    # The wheel zooms the picture where the pointer is, instead of scrolling the page; more labels find room.
    box = svg.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    before_scroll = page.evaluate("window.scrollY")
    for _ in range(4):
        page.mouse.wheel(0, -240)
    page.wait_for_function("() => /scale\\((?!1\\))/.test(document.querySelector('svg.graph g.viewport')"
                           ".getAttribute('transform') || '')")
    assert scale_of(page) > 2
    assert page.evaluate("window.scrollY") == before_scroll
    page.wait_for_timeout(100)  # the labels are placed on the next frame
    zoomed = label_boxes(page)
    assert_no_collisions(zoomed)
    # Circles keep their size on screen as the view zooms in.
    radius = svg.locator("a.node circle").first.evaluate("c => c.getBoundingClientRect().width")
    assert radius < 45

    # A drag pans (no memory opens even when it starts on one); a click opens the memory.
    transform = svg.locator("g.viewport").get_attribute("transform")
    page.mouse.move(box["x"] + 100, box["y"] + 100)
    page.mouse.down()
    page.mouse.move(box["x"] + 180, box["y"] + 160, steps=5)
    page.mouse.up()
    assert svg.locator("g.viewport").get_attribute("transform") != transform
    expect(page).to_have_url(re.compile(r"#/graph$"))
    # Fit brings the whole picture back; the zoom buttons and keys step.
    page.get_by_role("button", name="Fit the whole graph").click()
    assert scale_of(page) == 1
    page.get_by_role("button", name="Zoom in").click()
    assert scale_of(page) == 1.5
    page.get_by_role("button", name="Zoom out").click()
    assert scale_of(page) == 1
    page.locator("#graph-limit").focus()
    page.keyboard.press("Tab")
    while not page.evaluate("document.activeElement.classList.contains('node')"):
        page.keyboard.press("Tab")
    page.keyboard.press("+")
    assert scale_of(page) == 1.5
    page.keyboard.press("0")
    assert scale_of(page) == 1
    # The focused memory's label is shown (its neighbours' next), in full, and labels stay apart.
    page.wait_for_timeout(100)
    focused = page.evaluate("document.activeElement.dataset.id")
    expect(svg.locator(f'.labels text.focused[data-id="{focused}"]')).to_have_count(1)
    assert_no_collisions(label_boxes(page))
    page.locator(".graph-bar").scroll_into_view_if_needed()
    dashboard.screenshot("graph-explore", full_page=False)
    # A click on a circle opens that memory, even where a label is drawn over the area next to it.
    target = svg.locator(f'a.node[data-id="{ids[0]}"] circle')
    target.click()
    expect(page).to_have_url(re.compile(r"#/entry\?id=" + ids[0]))


def test_graph_link_type_on_hover_and_dark_edges(dashboard):
    ids = seed_graph(dashboard.server)
    page = dashboard.open("graph")
    edge = page.locator(f'g.edge[data-source="{ids["pricing"]}"] line.hit')
    edge.hover(force=True)
    expect(page.locator(".graph-details")).to_contain_text("caused by")
    expect(page.locator(".graph-details")).to_contain_text("The pricing floor")
    # In dark the links stand out from the panel (at least 3:1, as WCAG asks of graphics).
    page.emulate_media(color_scheme="dark")
    page.mouse.move(0, 0)
    contrast = page.evaluate("""() => {
      const rgb = (text) => text.match(/[\\d.]+/g).slice(0, 3).map(Number);
      const line = document.querySelector('svg.graph g.edge line.stroke');
      const style = getComputedStyle(line);
      const panel = rgb(getComputedStyle(document.querySelector('svg.graph')).backgroundColor);
      const alpha = Number(style.opacity);
      const mixed = rgb(style.stroke).map((c, i) => c * alpha + panel[i] * (1 - alpha));
      const lum = (c) => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
        : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
      const [a, b] = [lum(mixed), lum(panel)].sort((x, y) => y - x);
      return (a + 0.05) / (b + 0.05);
    }""")
    assert contrast >= 3, contrast
    dashboard.screenshot("graph-dark")


def test_each_memory_shows_its_neighbourhood(dashboard):
    ids = seed_graph(dashboard.server)
    page = dashboard.open(f"entry?id={ids['pricing']}")
    around = page.locator("section", has=page.get_by_role("heading", name="Around it"))
    expect(around.locator("a.node")).to_have_count(2)
    expect(around.locator(f'a.node.seed[data-id="{ids["pricing"]}"]')).to_have_count(1)
    around.locator(f'a.node[data-id="{ids["invoice"]}"]').hover()
    expect(around.locator(".graph-details")).to_contain_text("caused by")
    around.get_by_role("link", name="Explore in the graph").click()
    expect(page).to_have_url(re.compile(r"#/graph\?seed=" + ids["pricing"] + "$"))
    page = dashboard.open(f"entry?id={ids['roof']}")
    around = page.locator("section", has=page.get_by_role("heading", name="Around it"))
    expect(around).to_contain_text("Nothing is linked to it yet.")
    expect(around.locator("svg")).to_have_count(0)


def test_graph_on_a_phone_opens_as_lists_and_pinches(dashboard):
    seed_web(dashboard.server, size=24)
    page = dashboard.page
    page.set_viewport_size({"width": 390, "height": 800})
    page = dashboard.open("graph")
    # The form folded away; lists first; the picture one press away, fitting the screen.
    expect(page.locator("#graph-seed")).to_be_hidden()
    expect(page.get_by_text("What to draw", exact=True)).to_be_visible()
    expect(page.get_by_role("heading", name="Nodes")).to_be_visible()
    expect(page.locator("svg.graph")).to_be_hidden()
    expect(page.get_by_role("button", name="List")).to_have_attribute("aria-pressed", "true")
    fill = "b => getComputedStyle(b).backgroundColor"  # which is on shows (issue 64 item 5): filled, the other not
    assert page.get_by_role("button", name="List").evaluate(fill) != page.get_by_role("button", name="Picture"
                                                                                     ).evaluate(fill)
    on = page.get_by_role("button", name="List").evaluate(fill)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert dashboard.accessibility() == []
    page.get_by_role("button", name="Picture").click()
    svg = page.locator("svg.graph")
    expect(svg).to_be_visible()
    assert page.get_by_role("button", name="Picture").evaluate(fill) == on
    expect(svg.locator("a.node")).to_have_count(24)
    expect(page.get_by_role("heading", name="Nodes")).to_be_hidden()
    assert svg.bounding_box()["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert_no_collisions(label_boxes(page))
    dashboard.screenshot("graph-phone")
    # Two fingers spreading apart zoom in (touch pointers, as a phone sends them).
    page.evaluate("""() => {
      const svg = document.querySelector('svg.graph');
      const b = svg.getBoundingClientRect();
      const [cx, cy] = [b.x + b.width / 2, b.y + b.height / 2];
      const send = (type, id, x, y) => svg.dispatchEvent(new PointerEvent(type, { pointerId: id, clientX: x,
        clientY: y, pointerType: 'touch', isPrimary: id === 1, bubbles: true }));
      send('pointerdown', 1, cx - 20, cy);
      send('pointerdown', 2, cx + 20, cy);
      send('pointermove', 1, cx - 60, cy);
      send('pointermove', 2, cx + 60, cy);
      send('pointerup', 1, cx - 60, cy);
      send('pointerup', 2, cx + 60, cy);
    }""")
    assert scale_of(page) > 2
    assert dashboard.accessibility() == []


def test_graph_of_an_empty_brain(dashboard):
    page = dashboard.open("graph")
    expect(page.get_by_text("Nothing to draw yet")).to_be_visible()
    expect(page.locator("svg.graph")).to_have_count(0)
    # No workspace chosen reads as Recall's and Memories' "any".
    expect(page.locator("#graph-workspace option[value='']")).to_have_text("any")
    expect(page.locator("#graph-workspace")).to_have_value("")
    check_accessibility(dashboard, page)


def project_card(page, slug):
    return page.locator(f'article.project[data-slug="{slug}"]')


def test_projects_create_edit_archive_delete(dashboard):
    server = dashboard.server
    with server.client() as client:
        capture(client, "Kick-off notes for the atlas launch", project="atlas")
        capture(client, "Atlas launch date moved to May", project="atlas")
    page = dashboard.open("projects")
    expect(project_card(page, "atlas")).to_contain_text("2 memories")

    # Create: it appears with its count, and its links lead to its memories, recall and graph.
    page.get_by_text("New project").click()
    page.locator("#project-name").fill("Second Brain")
    page.locator("#project-description").fill("The memory service and its dashboard")
    page.locator("#project-aliases").fill("brain, #memory")
    page.get_by_role("button", name="Create project").click()
    card = project_card(page, "second-brain")
    expect(card).to_contain_text("Second Brain")
    expect(card).to_contain_text("0 memories")
    expect(card).to_contain_text("#brain")
    expect(card).to_contain_text("#memory")
    with server.client() as client:
        made = {p["id"]: p for p in client.get("/projects").json()["projects"]}
    assert made["second-brain"]["aliases"] == ["brain", "memory"]
    assert made["second-brain"]["description"] == "The memory service and its dashboard"
    expect(card.get_by_role("link", name="Memories")).to_have_attribute("href", "#/memories?project=second-brain")
    expect(card.get_by_role("link", name="Recall")).to_have_attribute("href", "#/recall?project=second-brain&q=")
    expect(card.get_by_role("link", name="Graph")).to_have_attribute("href", "#/graph?project=second-brain")
    dashboard.screenshot("projects")
    check_accessibility(dashboard, page)

    # A slug the API refuses: its sentence, and nothing created.
    page.locator("#project-name").fill("Again")
    page.locator("#project-id").fill("second-brain")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("alert")).to_contain_text('project "second-brain" already exists')
    with server.client() as client:
        assert len(client.get("/projects").json()["projects"]) == 2

    # Edit: name, description and aliases.
    card = project_card(page, "second-brain")
    card.get_by_text("Edit").click()
    card.get_by_label("Name").fill("Brain v2")
    card.get_by_label("Aliases (comma-separated)").fill("brain")
    card.get_by_role("button", name="Save").click()
    card = project_card(page, "second-brain")
    expect(card.locator("h3")).to_have_text("Brain v2")
    expect(card).not_to_contain_text("#memory")

    # Archive: gone from the active list, back with "Show archived", and restored.
    card.get_by_role("button", name="Archive", exact=True).click()
    expect(project_card(page, "second-brain")).to_have_count(0)
    page.get_by_label("Show archived").check()
    expect(page).to_have_url(re.compile(r"#/projects\?archived=1$"))
    card = project_card(page, "second-brain")
    expect(card).to_contain_text("archived")
    with server.client() as client:
        listed = client.get("/projects", params={"include_archived": 1}).json()["projects"]
        assert {p["id"]: p["status"] for p in listed}["second-brain"] == "archived"
    card.get_by_role("button", name="Unarchive", exact=True).click()
    expect(project_card(page, "second-brain").get_by_role("button", name="Archive", exact=True)).to_be_visible()

    # Refused: someone else deleted it meanwhile; each action says the API's sentence next to the project, once,
    # and never as a toast. The names are matched exactly: "Archive" alone also matches "Unarchive", so the wait
    # above ended before the redraw after the unarchive, and that redraw, landing after the deletion, took the
    # card away before the test could press its button (the flake; a slow GET /projects made it fail every time).
    with server.client() as client:
        assert client.delete("/projects/atlas").status_code == 200
    atlas = project_card(page, "atlas")
    atlas.get_by_role("button", name="Archive", exact=True).click()
    expect(atlas.get_by_role("alert")).to_have_text('unknown project "atlas"')
    atlas.get_by_text("Edit").click()
    atlas.get_by_label("Name").fill("Atlas 2")
    atlas.get_by_role("button", name="Save").click()
    expect(atlas.get_by_role("alert")).to_have_text('unknown project "atlas"')
    atlas.get_by_role("button", name="Delete", exact=True).click()
    atlas.get_by_role("button", name="Delete it").click()
    expect(atlas.get_by_role("alert")).to_have_text('unknown project "atlas"')
    expect(page.locator(".toast.error")).to_have_count(0)

    # Delete asks in the page (never the browser's dialog); cancelled, nothing is sent.
    page.on("dialog", lambda dialog: (_ for _ in ()).throw(AssertionError(f"a browser dialog: {dialog.message}")))
    deletes: list[str] = []
    page.on("request", lambda request: request.method == "DELETE" and deletes.append(request.url))
    delete = project_card(page, "second-brain").get_by_role("button", name="Delete", exact=True)
    delete.click()
    question = project_card(page, "second-brain").get_by_role("group", name=re.compile("^Delete the project"))
    expect(question).to_contain_text("Delete the project Brain v2?")
    question.get_by_role("button", name="Cancel").click()
    expect(delete).to_be_focused()  # the button is given back
    assert deletes == []
    expect(project_card(page, "second-brain")).to_have_count(1)

    # Delete, answered.
    project_card(page, "second-brain").get_by_role("button", name="Delete", exact=True).click()
    project_card(page, "second-brain").get_by_role("button", name="Delete it").click()
    expect(project_card(page, "second-brain")).to_have_count(0)
    assert len(deletes) == 1 and "/projects/second-brain?" in deletes[0]
    with server.client() as client:
        assert [p["id"] for p in client.get("/projects", params={"include_archived": 1}).json()["projects"]] == []

    # Phone width and dark.
    page.set_viewport_size({"width": 390, "height": 800})
    page.emulate_media(color_scheme="dark")
    dashboard.open("projects")
    expect(page.get_by_text("No active projects")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert dashboard.accessibility() == []
