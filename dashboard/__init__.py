"""The web dashboard's static files (index.html, app.js, app.css, views/), served by entrypoints/api/dashboard.py."""
