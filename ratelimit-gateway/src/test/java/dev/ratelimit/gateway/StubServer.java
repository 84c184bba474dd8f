package dev.ratelimit.gateway;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** A Jetty server on a free loopback port whose one servlet hands every request to a handler: the stub upstreams' server. */
final class StubServer {

    /** Answers one request. */
    @FunctionalInterface
    interface Handler {
        void serve(HttpServletRequest request, HttpServletResponse response) throws IOException;
    }

    private StubServer() {}

    /** Starts a server of Jetty's defaults on a free loopback port; {@link #port} tells which. */
    static Server start(Handler handler) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        return start(server, handler);
    }

    /** Starts {@code server}, whose connectors the caller set, with the one servlet. */
    static Server start(Server server, Handler handler) throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.addServlet(
                new ServletHolder(new HttpServlet() {
                    private static final long serialVersionUID = 1L;

                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response)
                            throws IOException {
                        handler.serve(request, response);
                    }
                }),
                "/*");
        server.setHandler(context);
        server.start();
        return server;
    }

    static int port(Server server) {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }
}
